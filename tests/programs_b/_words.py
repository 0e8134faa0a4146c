"""A small built-in word list standing in for makemore's names.txt (nothing is downloaded)."""

WORDS = """emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily
elizabeth mila ella avery sofia camila aria scarlett victoria madison luna grace chloe
penelope layla riley zoey nora lily eleanor hannah lillian addison aubrey ellie stella
natalie zoe leah hazel violet aurora savannah audrey brooklyn bella claire skylar lucy
paisley everly anna caroline nova genesis emilia kennedy samantha maya willow kinsley
naomi aaliyah elena sarah ariana allison gabriella alice madelyn cora ruby eva serenity
autumn adeline hailey gianna valentina isla eliana quinn nevaeh ivy sadie piper lydia
alexa josephine emery julia delilah arianna vivian kaylee sophie brielle madeline noah
liam mason jacob william ethan james alexander michael benjamin elijah daniel aiden logan
matthew lucas jackson david oliver jayden joseph gabriel samuel carter anthony john dylan
luke henry andrew isaac christopher joshua wyatt sebastian owen caleb nathan ryan jack
hunter levi christian jaxon julian landon grayson jonathan isaiah charles thomas aaron
eli connor jeremiah cameron josiah adrian colton jordan brayden nicholas robert angel
hudson lincoln evan dominic austin gavin nolan parker adam chase jace ian cooper easton
kevin jose tyler brandon asher jaxson mateo jason ayden zachary carson xavier leo ezra
bentley sawyer kayden blake nathaniel ryder theodore elias tristan roman leonardo camden
brody luis miles micah vincent justin greyson declan maxwell juan cole damian carlos max
harrison weston santiago axel everett ryker bryson kai zane zion""".split()
