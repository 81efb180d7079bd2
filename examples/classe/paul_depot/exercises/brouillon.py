print('essai')
